package main

import "io/fs"

// logOpenFlags is none here: Go opens no file without following a link on
// Windows, so openRunLog's look at the name before it opens it is what
// keeps a link out; there are no FIFOs.
const logOpenFlags = 0

// oneName is true here: the file information does not count names.
func oneName(fs.FileInfo) bool { return true }
