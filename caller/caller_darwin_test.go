package caller

import (
	"encoding/binary"
	"slices"
	"testing"
)

// TestParseProcArgs: kern.procargs2's layout, as Darwin writes it, and
// what is not of it.
func TestParseProcArgs(t *testing.T) {
	argc := binary.LittleEndian.AppendUint32(nil, 2)
	b := append(argc, "/bin/sh\x00\x00\x00\x00sh\x00-c\x00CLAUDECODE=1\x00HOME=/h\x00\x00executable_path=/bin/sh\x00"...)
	args, env, ok := parseProcArgs(b)
	if !ok || !slices.Equal(args, []string{"sh", "-c"}) || !slices.Equal(env, []string{"CLAUDECODE=1", "HOME=/h"}) {
		t.Errorf("parseProcArgs = %q %q %v", args, env, ok)
	}
	for _, bad := range [][]byte{nil, {1, 0}, append(binary.LittleEndian.AppendUint32(nil, 3), "/bin/sh\x00\x00a\x00"...)} {
		if _, _, ok := parseProcArgs(bad); ok {
			t.Errorf("parseProcArgs(%q) is ok", bad)
		}
	}
}
