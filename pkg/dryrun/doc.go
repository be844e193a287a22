// Package dryrun names the strategies of kubectl's --dry-run flag, as both
// front ends read them: the --local mode (which refuses Server) and live
// patching. It imports nothing, so the --local front door stays free of
// client-go.
package dryrun
