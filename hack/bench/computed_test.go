package main

import (
	"math"
	"testing"
	"time"
)

// TestPairedShare: the port's share is taken in each round, and the
// median of those is reported, not the ratio of two medians.
func TestPairedShare(t *testing.T) {
	ms := func(d int) time.Duration { return time.Duration(d) * time.Millisecond }
	local := []run{{Wall: ms(100), CPU: ms(200)}, {Wall: ms(200), CPU: ms(200)}, {Wall: ms(400), CPU: ms(100)}, {Wall: ms(100), CPU: ms(100)}}
	fixed := []run{{Wall: ms(90), CPU: ms(150)}, {Wall: ms(190), CPU: ms(200)}, {Wall: ms(100), CPU: ms(100)}, {Wall: ms(99), CPU: ms(110)}}
	// Wall shares 10%, 5%, 75%, 1%: median (5% + 10%) / 2. The ratio of
	// the medians would be 1 - 140/150.
	wall, cpu := pairedShare(local, fixed)
	if math.Abs(wall-0.075) > 1e-9 {
		t.Errorf("wall share %v, want 0.075", wall)
	}
	// CPU shares 25%, 0%, 0%, -10%: median 0.
	if math.Abs(cpu) > 1e-9 {
		t.Errorf("CPU share %v, want 0", cpu)
	}
}
