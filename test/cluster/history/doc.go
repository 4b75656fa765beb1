// Package history records what a fault run saw — every request's invoke and
// completion time and the IDs it received, every node acquisition, every
// phase of faults — as JSON lines, and checks a recorded history: no ID
// twice, each caller's IDs from one generator increasing, the processes
// holding a node in ID order exactly as they acquired it, each ID's time
// inside its request's window widened by the allowed lead, and the errors
// and serving gaps clients saw. A failed run's file can be checked again
// with cmd/firn-check.
package history
