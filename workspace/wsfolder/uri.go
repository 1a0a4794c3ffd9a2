package wsfolder

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// PathFromURI converts a file URI (RFC 8089, as LSP clients send them) into
// a clean absolute path: "file:///tmp/my%20dir" → "/tmp/my dir". Other
// schemes, remote hosts, relative paths and NUL bytes are refused with an
// error that names the problem.
func PathFromURI(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("not a valid URI: %v", err)
	}
	if !strings.EqualFold(u.Scheme, "file") {
		if u.Scheme == "" {
			return "", fmt.Errorf("not a file URI or an absolute path")
		}
		return "", fmt.Errorf("scheme %q is not supported: agentd works on local folders (file URIs) only", u.Scheme)
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return "", fmt.Errorf("host %q is not supported: agentd works on local folders only", u.Host)
	}
	p := u.Path
	if u.Opaque != "" || !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("file URI has no absolute path")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path contains a NUL byte")
	}
	return filepath.Clean(p), nil
}

// URIFromPath is the file URI of an absolute path, percent-encoded as VS
// Code writes it: "/tmp/my dir" → "file:///tmp/my%20dir".
func URIFromPath(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Clean(path))}).String()
}
