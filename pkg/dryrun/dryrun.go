package dryrun

// Strategy says whether and where a change is only simulated.
type Strategy string

// The strategies, as kubectl's --dry-run flag names them.
const (
	None   Strategy = "none"   // the change is made
	Client Strategy = "client" // the change is computed and printed, not sent
	Server Strategy = "server" // the server runs the change and stores nothing
)
