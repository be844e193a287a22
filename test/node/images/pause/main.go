// Command pause is the node's sandbox image: it holds a Pod's namespaces
// and blocks until it is asked to stop (SIGTERM or SIGINT), as the
// Kubernetes pause container does.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
