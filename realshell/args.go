package realshell

import "strings"

// Args is a bash command line as spear-term received it.
type Args struct {
	// Command is the -c command string, when HasCommand, and
	// CommandIndex where it stands among the arguments (-1: none).
	Command      string
	CommandIndex int
	HasCommand   bool
	// Script is true when a script file holds the commands: then
	// spear-term is not the one to read them.
	Script bool
	// ReadStdin is true for -s: commands come from stdin, as in stream mode.
	ReadStdin bool
	// Interactive is true for -i.
	Interactive bool
	// NoExec is true for -n or -o noexec (the last of them and their +
	// forms counts): bash then only reads the commands, and runs none.
	NoExec bool
	// Options are the option words before the command string or script,
	// without -c, -i and -s, for starting a persistent shell.
	Options []string
	// Positional are the words after the command string or script name.
	Positional []string
}

// ParseArgs reads bash's own argument syntax: long options first
// (--login, --norc, --noprofile, --rcfile FILE, …), then single-letter
// options that may be combined (-lc, -ex), -o NAME and -O NAME (and their +
// forms) taking an argument, and -- ending the options. With -c, the first
// word that is not an option is the command string.
func ParseArgs(args []string) Args {
	sa := Args{CommandIndex: -1}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" {
			i++
			break
		}
		if strings.HasPrefix(a, "--") {
			sa.Options = append(sa.Options, a)
			if (a == "--rcfile" || a == "--init-file") && i+1 < len(args) {
				i++
				sa.Options = append(sa.Options, args[i])
			}
			continue
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		kept := []byte{a[0]}
		var takes []string
		for _, c := range a[1:] {
			switch c {
			case 'c':
				sa.HasCommand = true
			case 'i':
				sa.Interactive = true
			case 's':
				sa.ReadStdin = true
			case 'n':
				sa.NoExec = a[0] == '-'
				kept = append(kept, byte(c))
			case 'o', 'O':
				kept = append(kept, byte(c))
				if i+1 < len(args) {
					i++
					takes = append(takes, args[i])
					if c == 'o' && args[i] == "noexec" {
						sa.NoExec = a[0] == '-'
					}
				}
			default:
				kept = append(kept, byte(c))
			}
		}
		if len(kept) > 1 {
			sa.Options = append(sa.Options, string(kept))
		}
		sa.Options = append(sa.Options, takes...)
	}
	rest := args[i:]
	switch {
	case sa.HasCommand:
		if len(rest) > 0 {
			sa.Command, sa.CommandIndex, rest = rest[0], i, rest[1:]
		}
	case len(rest) > 0 && !sa.ReadStdin:
		sa.Script = true // bash FILE: the file holds the commands
	}
	sa.Positional = rest
	return sa
}
