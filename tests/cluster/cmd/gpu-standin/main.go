// gpu-standin is a TEST DOUBLE for a GPU DRA driver (NVIDIA's gpu.nvidia.com,
// AMD's gpu.amd.com) on the node in a box, which has no GPU. It publishes the
// GPUs of a node type, read from that node type's ResourceSlice file under
// packaging/examples/ (the devices and attributes of the vendor driver's
// live slices), as a ResourceSlice of this node, registers with the kubelet
// as that driver and prepares and unprepares claims as no-ops (no CDI
// device, no container edit), logging each call. It exists so that the real
// scheduler can allocate a GPU and its NUMA-aligned NICs together and the
// real kubelet can prepare both drivers' devices; nothing of dranet uses it.
//
//	gpu-standin --slices FILE --driver-name gpu.nvidia.com --node-name NODE --kubeconfig FILE
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

type standin struct {
	driver string
}

// PrepareResourceClaims hands back the claim's devices of this driver and
// nothing else: there is no GPU to set up.
func (s *standin) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		var result kubeletplugin.PrepareResult
		if claim.Status.Allocation == nil {
			result.Err = fmt.Errorf("claim %s/%s is not allocated", claim.Namespace, claim.Name)
			out[claim.UID] = result
			continue
		}
		var names []string
		for _, r := range claim.Status.Allocation.Devices.Results {
			if r.Driver != s.driver {
				continue
			}
			result.Devices = append(result.Devices, kubeletplugin.Device{
				Requests: []string{r.Request}, PoolName: r.Pool, DeviceName: r.Device,
			})
			names = append(names, r.Device)
		}
		klog.InfoS("prepared (no-op)", "claim", klog.KObj(claim), "uid", claim.UID, "devices", strings.Join(names, ","))
		out[claim.UID] = result
	}
	return out, nil
}

func (s *standin) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	out := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		klog.InfoS("unprepared (no-op)", "claim", claim.String())
		out[claim.UID] = nil
	}
	return out, nil
}

func (s *standin) HandleError(ctx context.Context, err error, msg string) {
	klog.ErrorS(err, msg)
}

func (s *standin) WatchHealthStatus(ctx context.Context, reports chan<- kubeletplugin.DeviceHealthReport) error {
	return kubeletplugin.ErrHealthNotSupported
}

// devicesOf reads every ResourceSlice document of file and keeps the devices
// of driver.
func devicesOf(file, driver string) ([]resourceapi.Device, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var devices []resourceapi.Device
	for _, doc := range strings.Split("\n"+string(data), "\n---") {
		var slice resourceapi.ResourceSlice
		if err := yaml.UnmarshalStrict([]byte(doc), &slice); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if slice.Kind == "ResourceSlice" && slice.Spec.Driver == driver {
			devices = append(devices, slice.Spec.Devices...)
		}
	}
	if len(devices) == 0 {
		return nil, fmt.Errorf("%s has no ResourceSlice of driver %s", file, driver)
	}
	return devices, nil
}

func run() error {
	slices := flag.String("slices", "", "ResourceSlice file whose devices of --driver-name this node publishes")
	driver := flag.String("driver-name", "", "the GPU driver to stand in for (gpu.nvidia.com, gpu.amd.com)")
	node := flag.String("node-name", "", "this node")
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig for publishing the slice")
	kubeletDir := flag.String("kubelet-root-dir", "/var/lib/kubelet", "the kubelet's root directory")
	klog.InitFlags(nil)
	flag.Parse()
	if *slices == "" || *driver == "" || *node == "" || *kubeconfig == "" {
		return errors.New("--slices, --driver-name, --node-name and --kubeconfig are required")
	}
	devices, err := devicesOf(*slices, *driver)
	if err != nil {
		return err
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	nodeObject, err := client.CoreV1().Nodes().Get(ctx, *node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	dataDir := *kubeletDir + "/plugins/" + *driver
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return err
	}
	helper, err := kubeletplugin.Start(ctx, &standin{driver: *driver},
		kubeletplugin.DriverName(*driver), kubeletplugin.NodeName(*node), kubeletplugin.NodeUID(nodeObject.UID),
		kubeletplugin.KubeClient(client), kubeletplugin.PluginDataDirectoryPath(dataDir),
		kubeletplugin.RegistrarDirectoryPath(*kubeletDir+"/plugins_registry"))
	if err != nil {
		return err
	}
	defer helper.Stop()
	resources := resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{
		*node: {Slices: []resourceslice.Slice{{Devices: devices}}},
	}}
	if err := helper.PublishResources(ctx, resources); err != nil {
		return err
	}
	klog.InfoS("standing in for a GPU driver", "driver", *driver, "node", *node, "devices", len(devices))
	<-ctx.Done()
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gpu-standin:", err)
		os.Exit(1)
	}
}
