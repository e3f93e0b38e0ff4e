package mcp

import (
	"encoding/json"
)

// ProtocolVersion is the only protocol version this client speaks.
const ProtocolVersion = "2025-06-18"

// Implementation names a client or a server, as initialize exchanges them.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// InitializeResult is what a server answers to initialize.
type InitializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities,omitempty"`
	ServerInfo      Implementation  `json:"serverInfo"`
	Instructions    string          `json:"instructions,omitempty"`
}

// ToolAnnotations are a server's hints about a tool. They are untrusted.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Tool is one tool as tools/list describes it. Fields a server adds beyond
// these are ignored.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
}

// DisplayName is the tool's title, else its annotations' title, else its name.
func (t *Tool) DisplayName() string {
	if t.Title != "" {
		return t.Title
	}
	if t.Annotations != nil && t.Annotations.Title != "" {
		return t.Annotations.Title
	}
	return t.Name
}

// ResourceContents is the resource inside an embedded resource content block.
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// Content is one content block of a tool result: text, image, audio,
// resource_link or resource. Type says which fields are meaningful.
type Content struct {
	Type string `json:"type"`

	// Text is set for "text".
	Text string `json:"text,omitempty"`

	// Data (base64) and MimeType are set for "image" and "audio";
	// MimeType may also describe a resource_link.
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`

	// URI, Name, Title, Description and Size describe a "resource_link".
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`

	// Resource is set for "resource".
	Resource *ResourceContents `json:"resource,omitempty"`
}

// CallToolResult is what a server answers to tools/call.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}
