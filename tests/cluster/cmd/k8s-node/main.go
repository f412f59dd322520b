// Command k8s-node holds every Kubernetes component the node-in-a-box needs
// (tests/cluster/README.md), built from their published Go modules and linked
// once. It runs the component named by the name it is called as (a symlink)
// or by its first argument:
//
//	k8s-node kube-apiserver --help
//	ln -s k8s-node kubectl; ./kubectl version
//
// Each component runs exactly as its own upstream binary would: the same
// cobra command, the same flags, the same exit codes.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	_ "time/tzdata" // CronJob time zones (kube-apiserver, kube-controller-manager)

	"go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // kubectl's auth plugins
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

// Each entry runs one component with os.Args[1:] as its arguments and
// returns its exit code.
var components = map[string]func() int{
	"etcd": func() int {
		etcdmain.Main(os.Args) // exits by itself on failure
		return 0
	},
	"kube-apiserver":          func() int { return cli.Run(apiserver.NewAPIServerCommand()) },
	"kube-controller-manager": func() int { return cli.Run(controllermanager.NewControllerManagerCommand()) },
	"kube-scheduler":          func() int { return cli.Run(scheduler.NewSchedulerCommand()) },
	"kubelet":                 func() int { return cli.Run(kubelet.NewKubeletCommand(context.Background())) },
	"kubectl": func() int {
		logs.GlogSetter(kubectl.GetLogVerbosity(os.Args)) //nolint:errcheck // as upstream's kubectl
		if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err) // prints and exits 1
		}
		return 0
	},
}

func main() {
	name := filepath.Base(os.Args[0])
	if _, ok := components[name]; !ok && len(os.Args) > 1 {
		// "k8s-node kubectl get pods" runs as "kubectl get pods".
		name = os.Args[1]
		os.Args = append([]string{name}, os.Args[2:]...)
	}
	run, ok := components[name]
	if !ok {
		names := make([]string, 0, len(components))
		for n := range components {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "usage: k8s-node {%s} [arguments]\n", strings.Join(names, "|"))
		os.Exit(2)
	}
	os.Exit(run())
}
