package audit

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"time"
)

// FailuresFile is where the events that could not be written to the trail
// at path are counted: a JSON line each, beside the trail.
func FailuresFile(path string) string { return path + ".failed" }

// Failure is one event the trail did not get, as its failures file says it.
type Failure struct {
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	Turn    string    `json:"turn,omitempty"`
	Event   string    `json:"event"` // "open" when the trail could not be opened
	Error   string    `json:"error"`
}

// noteFailure counts an event the trail at path did not get, in its
// failures file. It is the last resort: when that cannot be written
// either, nothing more can be done here.
func noteFailure(path, session, turn, event string, err error) {
	if path == "" || err == nil {
		return
	}
	line, _ := json.Marshal(Failure{Time: time.Now().UTC(), Session: session, Turn: turn, Event: event, Error: err.Error()})
	f, ferr := os.OpenFile(FailuresFile(path), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if ferr != nil {
		return
	}
	defer f.Close()
	// One write of a short line: appends stay whole.
	f.Write(append(line, '\n'))
}

// Failures counts the events the trail at path did not get, for one
// session or, with session empty, for all; last is the latest of them.
// A trail whose failures file does not exist has none.
func Failures(path, session string) (n int, last *Failure, err error) {
	f, err := os.Open(FailuresFile(path))
	if os.IsNotExist(err) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var fl Failure
		if strings.TrimSpace(sc.Text()) == "" || json.Unmarshal(sc.Bytes(), &fl) != nil {
			continue
		}
		if session != "" && fl.Session != session {
			continue
		}
		n++
		last = &fl
	}
	return n, last, sc.Err()
}
