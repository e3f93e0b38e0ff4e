// Package lineread reads newline-terminated lines of bounded length: the
// framing of MCP over stdio, of the session process's protocol, and of
// what spear-term reads from the session process.
package lineread

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Read reads one newline-terminated line of at most max bytes from r; a
// last line without a newline counts. A longer line is a *TooLongError.
func Read(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, &TooLongError{Max: max}
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// TooLongError is a line longer than the bound Read was given.
type TooLongError struct{ Max int }

func (e *TooLongError) Error() string { return fmt.Sprintf("a line longer than %d bytes", e.Max) }
