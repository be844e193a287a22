// Package config is how every front end reads what configures an
// injection: kubectl-inject's --local (plugin/local), the full command
// kinject-live (plugin/cmd) and the KRM function inject-fn (fn/processor)
// all take their settings, their template and its warnings from here, and
// map errors to exit codes here.
//
//   - Flags are the command line's: the template flags (--template,
//     --template-configmap, --mode, --image, ...), which mean the same in
//     every subcommand, and --local's. The template flags that set a
//     setting are decoded by the settings' own schema (inject.Settings,
//     inject.DecodeSettings) and go over a template file's settings when
//     given, whatever their value.
//   - LoadFunction reads a function config: none (the embedded default),
//     a SidecarInjection, a ConfigMap of flat settings (kpt fn eval's
//     key=value arguments) with an optional template under data.config, or
//     a bare partial Pod spec. Its settings are decoded by the same schema.
//   - A template ConfigMap reference ("[NAMESPACE/]NAME[:KEY]") is resolved
//     in one place for the flag, a template file's templateConfigMap and a
//     function config's (templateFromConfigMap).
//   - NewInjector builds the injector and prints the template's warnings
//     (privileges it widens, ports it binds that nothing reserves).
//   - ExitError, DiffExit and ExitCode are the exit codes of every command.
//
// Local is the contract between the full command and the --local front
// end, which the main packages wire.
package config
