package deploy

// WritePolicy is a provider's `write` key: what happens to its WRITEs.
type WritePolicy string

// Write policies of a provider.
const (
	WriteRefuse  WritePolicy = "refuse"
	WriteConfirm WritePolicy = "confirm"
	WriteAllow   WritePolicy = "allow"
)

func (w WritePolicy) String() string { return string(w) }

// Task is a request class a provider serves (its `tasks` key).
type Task string

// Task classes a provider may serve.
const (
	TaskImplementation Task = "implementation"
	TaskMixed          Task = "mixed"
	TaskGeneral        Task = "general"
)

func (t Task) String() string { return string(t) }

// TurnClass is a turn's `class`.
type TurnClass string

// Turn classes.
const (
	ClassImplementation   TurnClass = "implementation"
	ClassMixed            TurnClass = "mixed"
	ClassGeneral          TurnClass = "general"
	ClassStandardQuestion TurnClass = "standard-question"
)

func (c TurnClass) String() string { return string(c) }

// Pass is the pass of a mixed change (a turn's `pass`).
type Pass string

// Passes of a mixed change; the zero Pass is no pass.
const (
	PassNormative      Pass = "normative"
	PassImplementation Pass = "implementation"
	PassCompliance     Pass = "compliance"
)

func (p Pass) String() string { return string(p) }

// PermissionMode is a session's permission mode (a turn's `permission_mode`).
type PermissionMode string

// Permission modes.
const (
	ModeAsk      PermissionMode = "ask"
	ModeAuto     PermissionMode = "auto"
	ModeReadOnly PermissionMode = "read-only"
)

func (m PermissionMode) String() string { return string(m) }

// Access is a capability's class: READ when the registry's `read` key names
// its tool, WRITE otherwise, whatever the server says about it.
type Access string

// Capability classes.
const (
	Read  Access = "READ"
	Write Access = "WRITE"
)

func (a Access) String() string { return string(a) }

// Lifetime is how long a provider's server lives (its `lifetime` key).
type Lifetime string

// Lifetimes of a provider's server.
const (
	// LifetimeSession: started once per session and registry entry, and
	// kept for every call of that session until it idles out.
	LifetimeSession Lifetime = "session"
	// LifetimeCall: started for one use and stopped after it.
	LifetimeCall Lifetime = "call"
)

func (l Lifetime) String() string { return string(l) }
