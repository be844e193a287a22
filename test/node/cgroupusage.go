package node

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// cgroupRoot is where the kernel's cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// CgroupSample is a container's cumulative CPU time and its working set
// read from the kernel, at a moment: what the metrics sources are
// measured against, read apart from them.
type CgroupSample struct {
	Time time.Time
	// CPU is the CPU time the container's processes used since it
	// started.
	CPU time.Duration
	// Memory is the working set, as cAdvisor and the kubelet compute it:
	// the usage less the inactive file pages.
	Memory int64
}

// ReadContainerCgroup reads the cgroup of container name of pod, a Pod
// on the Node (the kubelet's cgroupfs layout:
// kubepods[/burstable|/besteffort]/pod<uid>/<container id>), on cgroup
// v1 or v2.
func ReadContainerCgroup(pod *corev1.Pod, name string) (CgroupSample, error) {
	id, err := containerID(pod, name)
	if err != nil {
		return CgroupSample{}, err
	}
	rel := ""
	for _, qos := range []string{"", "burstable", "besteffort"} {
		p := filepath.Join("kubepods", qos, "pod"+string(pod.UID), id)
		if _, err := os.Stat(filepath.Join(cgroupRoot, "cpuacct", p)); err == nil {
			rel = p
		} else if _, err := os.Stat(filepath.Join(cgroupRoot, p, "cpu.stat")); err == nil {
			return readCgroupV2(filepath.Join(cgroupRoot, p))
		}
	}
	if rel == "" {
		return CgroupSample{}, fmt.Errorf("no cgroup for container %s (%s) of pod %s/%s", name, id, pod.Namespace, pod.Name)
	}
	return readCgroupV1(filepath.Join(cgroupRoot, "cpuacct", rel), filepath.Join(cgroupRoot, "memory", rel))
}

// containerID is the runtime's id of container name of pod (its status's
// containerID without the runtime's scheme), which names its cgroup.
func containerID(pod *corev1.Pod, name string) (string, error) {
	for _, st := range append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if _, id, ok := strings.Cut(st.ContainerID, "://"); st.Name == name && ok && id != "" {
			return id, nil
		}
	}
	return "", fmt.Errorf("pod %s/%s has no started container %s", pod.Namespace, pod.Name, name)
}

// readCgroupV1 reads cpuacct.usage (nanoseconds) and the memory
// controller's usage and total_inactive_file.
func readCgroupV1(cpuDir, memDir string) (CgroupSample, error) {
	s := CgroupSample{Time: time.Now()}
	ns, err := readInt(filepath.Join(cpuDir, "cpuacct.usage"))
	if err != nil {
		return s, err
	}
	s.CPU = time.Duration(ns)
	usage, err := readInt(filepath.Join(memDir, "memory.usage_in_bytes"))
	if err != nil {
		return s, err
	}
	inactive, err := readStat(filepath.Join(memDir, "memory.stat"), "total_inactive_file")
	if err != nil {
		return s, err
	}
	s.Memory = workingSet(usage, inactive)
	return s, nil
}

// readCgroupV2 reads cpu.stat's usage_usec, memory.current and
// memory.stat's inactive_file.
func readCgroupV2(dir string) (CgroupSample, error) {
	s := CgroupSample{Time: time.Now()}
	us, err := readStat(filepath.Join(dir, "cpu.stat"), "usage_usec")
	if err != nil {
		return s, err
	}
	s.CPU = time.Duration(us) * time.Microsecond
	usage, err := readInt(filepath.Join(dir, "memory.current"))
	if err != nil {
		return s, err
	}
	inactive, err := readStat(filepath.Join(dir, "memory.stat"), "inactive_file")
	if err != nil {
		return s, err
	}
	s.Memory = workingSet(usage, inactive)
	return s, nil
}

func workingSet(usage, inactive int64) int64 {
	if inactive < usage {
		return usage - inactive
	}
	return 0
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read cgroup: %w", err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read cgroup %s: %w", path, err)
	}
	return v, nil
}

// readStat reads the value of key in a file of "key value" lines.
func readStat(path, key string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read cgroup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == key {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read cgroup %s: %s: %w", path, key, err)
			}
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read cgroup %s: %w", path, err)
	}
	return 0, fmt.Errorf("read cgroup %s: no %s", path, key)
}
