package intercept

import (
	"bufio"
	"io"
	"iter"
	"runtime"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// readSubmissions sends each submission read from r on the channel it
// returns, and closes it at the end of input. It stops sending once done is
// closed, but a read already waiting on r goes on waiting. It owns chk,
// which may be nil, and closes it when it ends.
func readSubmissions(r io.Reader, chk *bashChecker, done <-chan struct{}) <-chan string {
	out := make(chan string)
	go func() {
		// The checker's parent-death signal follows the thread that
		// starts it: the thread stays until the checker is closed.
		runtime.LockOSThread()
		defer close(out)
		subs := newSubmissions(r)
		if chk != nil {
			defer chk.Close()
			subs.check = chk
		}
		for {
			src, ok := subs.next()
			if !ok {
				return
			}
			select {
			case out <- src:
			case <-done:
				return
			}
		}
	}()
	return out
}

// submissions cuts a stream into complete commands, as bash would read
// them: a line, or as many lines as an open quote, compound command or
// here-document needs.
//
// mvdan.cc/sh finds where an ordinary line ends, at no cost. Where it wants
// more lines, cannot parse a line that bash may accept, or parses a line
// whose << bash may read as a here-document where it read none (see
// unreadHeredoc), bash itself is asked (check), line by line, whether the
// text so far is complete, and
// the submission ends where bash says: a text mvdan cannot parse is one
// submission, never one per line. Bash is not asked about a line that
// cannot end the text: inside a here-document, one that is not its
// delimiter; inside single quotes, one without a quote.
//
// The parser's iterator is never stopped while it is suspended: stopping it
// inside an incomplete line makes mvdan.cc/sh's InteractiveSeq yield again
// and panic. It is drained to its end instead, reading nothing more, and a
// fresh parser takes the rest of the input.
type submissions struct {
	lr     *lineReader
	check  completer // nil: mvdan.cc/sh alone decides
	parser *syntax.Parser
	feed   *feed
	pull   func() ([]*syntax.Stmt, error, bool)
	done   bool // the current iterator has ended
	failed bool // it ended on a parse error
}

func newSubmissions(r io.Reader) *submissions {
	s := &submissions{lr: &lineReader{br: bufio.NewReaderSize(r, 64<<10)}}
	s.restart()
	return s
}

func (s *submissions) restart() {
	s.parser = syntax.NewParser(syntax.Variant(syntax.LangBash))
	s.feed = &feed{lr: s.lr}
	s.pull, _ = iter.Pull2(s.parser.InteractiveSeq(s.feed))
	s.done, s.failed = false, false
}

// drain ends the current parser's iterator without handing it more input.
func (s *submissions) drain() {
	s.feed.ended = true
	for {
		if _, _, ok := s.pull(); !ok {
			break
		}
	}
	s.done = true
}

// next returns the next complete submission, or false at the end of input.
func (s *submissions) next() (string, bool) {
	for {
		if s.done {
			if s.lr.eof && s.lr.pending == "" {
				src := s.lr.take()
				return src, src != ""
			}
			s.restart()
		}
		stmts, err, ok := s.pull()
		switch {
		case !ok:
			// The iterator ended: at the end of input, or after an
			// error. What it read since the last submission is one.
			// A parser that failed part-way through a long line leaves
			// the rest of the line unread: it belongs to this one too.
			s.done = true
			if src := s.lr.take() + s.lr.rest(); src != "" {
				return src, true
			}
		case err != nil && s.check != nil:
			// mvdan.cc/sh cannot parse it; bash may.
			s.drain()
			return s.byBash(s.lr.take() + s.lr.rest()), true
		case err != nil:
			s.failed = true // drain: the iterator ends after an error
		case s.failed:
		case !s.parser.Incomplete() && !(s.check != nil && (escapedNewline(s.lr.rec.String()) || unreadHeredoc(s.lr.rec.String(), stmts))):
			return s.lr.take(), true
		case s.check != nil:
			// It wants more lines, has a line of nothing but a
			// continuation, which bash joins to the next, or a << that
			// may start a here-document it did not read; bash says
			// how many.
			s.drain()
			return s.byBash(s.lr.take() + s.lr.rest()), true
		}
	}
}

// unreadHeredoc reports whether text, which mvdan.cc/sh parsed into stmts
// and found complete, holds a << that bash may read as the start of a
// here-document: one that is not part of a here-string (<<<) the parser
// found. mvdan.cc/sh reads the words of let and of a declaration as
// arithmetic, where << is a shift (let x<<EOF, declare a[x<<EOF]=1); bash
// reads a here-document, whose body the lines below are. A text without
// << costs a search for it.
func unreadHeredoc(text string, stmts []*syntax.Stmt) bool {
	if !strings.Contains(text, "<<") {
		return false
	}
	strs := 0
	for i := 0; i < len(text); {
		if text[i] != '<' {
			i++
			continue
		}
		j := i
		for j < len(text) && text[j] == '<' {
			j++
		}
		switch n := j - i; {
		case n == 3 || n == 4:
			strs++ // <<<, or <<< and a <
		case n >= 2:
			return true
		}
		i = j
	}
	found := 0
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			if r, ok := n.(*syntax.Redirect); ok && r.Op == syntax.WordHdoc {
				found++
			}
			return true
		})
	}
	return strs > found
}

// byBash extends text, which ends at the end of a line, line by line until
// bash finds it complete, and returns it. If bash cannot be asked, the
// text ends where it is.
func (s *submissions) byBash(text string) string {
	if !strings.HasSuffix(text, "\n") {
		return text // the end of input
	}
	var waiting completion
	last := lastLines(text)
	asked := false
	for {
		if !asked || mayEnd(waiting, last) {
			c, err := s.check.complete(text)
			if err != nil || c.done {
				return text
			}
			waiting, asked = c, true
		}
		next, ok := s.lr.line()
		if !ok {
			return text
		}
		text += next
		if !strings.HasSuffix(next, "\n") {
			return text
		}
		last = [2]string{last[1], next}
	}
}

// lastLines returns the last two lines of text, which ends with a newline;
// the first is empty when text is one line.
func lastLines(text string) [2]string {
	body := strings.TrimSuffix(text, "\n")
	i := strings.LastIndexByte(body, '\n')
	if i < 0 {
		return [2]string{"", text}
	}
	j := strings.LastIndexByte(body[:i], '\n')
	return [2]string{text[j+1 : i+1], text[i+1:]}
}

// mayEnd reports whether the last of lines, which follows the other, can
// end a text that waits as waiting says. Only a here-document's delimiter
// ends its body, also when a continued line joins the line before to it;
// only a quote ends single quotes.
func mayEnd(waiting completion, lines [2]string) bool {
	prev, line := lines[0], lines[1]
	switch {
	case waiting.heredoc != "":
		body := strings.TrimSuffix(line, "\n")
		return strings.TrimLeft(body, "\t") == waiting.heredoc || escapedNewline(prev)
	case waiting.quote != 0:
		return strings.IndexByte(line, waiting.quote) >= 0
	default:
		return true
	}
}

// feed is what one parser reads: the lines of the stream, until it is
// drained.
type feed struct {
	lr    *lineReader
	ended bool
}

func (f *feed) Read(p []byte) (int, error) {
	if f.ended {
		return 0, io.EOF
	}
	return f.lr.Read(p)
}

// lineReader hands the parser at most one line per Read and records what
// it handed, so that the text of each submission is known exactly.
type lineReader struct {
	br      *bufio.Reader
	pending string
	rec     strings.Builder
	eof     bool // the input has ended
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.pending == "" {
		line, err := l.br.ReadString('\n')
		if err != nil {
			l.eof = true
		}
		if line == "" {
			return 0, err
		}
		l.pending = line
	}
	n := copy(p, l.pending)
	l.rec.WriteString(l.pending[:n])
	l.pending = l.pending[n:]
	return n, nil
}

// line returns the next whole line, unrecorded, or false at the end of
// input. The last line may lack its newline.
func (l *lineReader) line() (string, bool) {
	if l.pending != "" {
		return l.rest(), true
	}
	if l.eof {
		return "", false
	}
	line, err := l.br.ReadString('\n')
	if err != nil {
		l.eof = true
	}
	return line, line != ""
}

// rest returns, and consumes, what is left of the current line.
func (l *lineReader) rest() string {
	r := l.pending
	l.pending = ""
	return r
}

func (l *lineReader) take() string {
	s := l.rec.String()
	l.rec.Reset()
	return s
}
