// Package gateway decides what a turn is offered from outside its workspace
// and checks, runs and frames every call a turn makes to it.
//
// It reads the provider registry (capabilities.json), the project registry
// and the turn file; selects the providers a turn admits; builds and keeps
// the turn's family of capabilities; shows it whole or as an index; runs
// the checks on every call; frames results as external content; and records
// all of it in the audit trail. It knows nothing about shell syntax.
package gateway
