package realshell

import (
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		args                       []string
		hasCommand                 bool
		command                    string
		script, stdin, interactive bool
		options, positional        string
	}{
		{[]string{"-c", "ls"}, true, "ls", false, false, false, "", ""},
		{[]string{"-lc", "ls", "argv0", "a"}, true, "ls", false, false, false, "-l", "argv0 a"},
		{[]string{"-l", "-c", "ls"}, true, "ls", false, false, false, "-l", ""},
		{[]string{"-c", "-e", "ls"}, true, "ls", false, false, false, "-e", ""},
		{[]string{"--login", "--norc", "-c", "ls"}, true, "ls", false, false, false, "--login --norc", ""},
		{[]string{"--rcfile", "f", "-c", "ls"}, true, "ls", false, false, false, "--rcfile f", ""},
		{[]string{"--init-file", "f", "-i"}, false, "", false, false, true, "--init-file f", ""},
		{[]string{"--rcfile"}, false, "", false, false, false, "--rcfile", ""},
		{[]string{"--noediting", "--", "-c"}, false, "", true, false, false, "--noediting", "-c"},
		{[]string{"-o", "pipefail", "-O", "extglob", "-c", "ls"}, true, "ls", false, false, false, "-o pipefail -O extglob", ""},
		{[]string{"-eo", "pipefail", "-c", "ls"}, true, "ls", false, false, false, "-eo pipefail", ""},
		{[]string{"+o", "history", "-c", "ls"}, true, "ls", false, false, false, "+o history", ""},
		{[]string{"-oO", "pipefail", "extglob", "-s"}, false, "", false, true, false, "-oO pipefail extglob", ""},
		{[]string{"-o"}, false, "", false, false, false, "-o", ""},
		{[]string{"+x", "-c", "ls"}, true, "ls", false, false, false, "+x", ""},
		{[]string{"-c"}, true, "", false, false, false, "", ""},
		{[]string{"-c", "--", "ls"}, true, "ls", false, false, false, "", ""},
		{[]string{"-c", "ls", "--", "x"}, true, "ls", false, false, false, "", "-- x"},
		{[]string{"-ic", "ls"}, true, "ls", false, false, true, "", ""},
		{[]string{"-sc", "ls", "a"}, true, "ls", false, true, false, "", "a"},
		{[]string{"-lis"}, false, "", false, true, true, "-l", ""},
		{[]string{"script.sh", "a"}, false, "", true, false, false, "", "script.sh a"},
		{[]string{"-x", "script.sh"}, false, "", true, false, false, "-x", "script.sh"},
		{[]string{"-s", "a", "b"}, false, "", false, true, false, "", "a b"},
		{[]string{"-s", "-x"}, false, "", false, true, false, "-x", ""},
		{[]string{"-i"}, false, "", false, false, true, "", ""},
		{[]string{}, false, "", false, false, false, "", ""},
		{[]string{"-", "x"}, false, "", true, false, false, "", "x"},
		{[]string{"--"}, false, "", false, false, false, "", ""},
		{[]string{"+"}, false, "", true, false, false, "", "+"},
	}
	for _, tc := range cases {
		sa := ParseArgs(tc.args)
		if sa.HasCommand != tc.hasCommand || sa.Command != tc.command || sa.Script != tc.script || sa.ReadStdin != tc.stdin ||
			sa.Interactive != tc.interactive || strings.Join(sa.Options, " ") != tc.options || strings.Join(sa.Positional, " ") != tc.positional {
			t.Errorf("%q: %+v", tc.args, sa)
		}
	}
}

// TestParseArgsNoExec: -n and -o noexec make bash only read, the last of
// them and their + forms counting.
func TestParseArgsNoExec(t *testing.T) {
	for args, want := range map[string]bool{
		"-n": true, "-nc ls": true, "-n -c ls": true, "-o noexec": true, "-eo noexec -c ls": true,
		"-n +n": false, "-o noexec +o noexec": false, "+n": false, "-c ls": false, "-o pipefail": false,
		"-c -n": true, "-": false, "-l -n script.sh": true,
	} {
		if got := ParseArgs(strings.Fields(args)).NoExec; got != want {
			t.Errorf("%q: NoExec %v, want %v", args, got, want)
		}
	}
}
