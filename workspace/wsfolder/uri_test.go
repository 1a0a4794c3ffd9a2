package wsfolder

import "testing"

func TestPathFromURI(t *testing.T) {
	tests := []struct {
		uri, want string
		wantErr   bool
	}{
		{uri: "file:///tmp/plain", want: "/tmp/plain"},
		{uri: "file:///tmp/my%20dir", want: "/tmp/my dir"},
		{uri: "file:///tmp/a%25b", want: "/tmp/a%b"},
		{uri: "file:///tmp/%C3%A9t%C3%A9", want: "/tmp/été"},
		{uri: "file:///tmp/été", want: "/tmp/été"},
		{uri: "file://localhost/tmp/x", want: "/tmp/x"},
		{uri: "FILE:///tmp/x/", want: "/tmp/x"},
		{uri: "file:///tmp/x/../y", want: "/tmp/y"},
		{uri: "untitled:Untitled-1", wantErr: true},
		{uri: "vscode-remote://ssh/tmp/x", wantErr: true},
		{uri: "file://otherhost/tmp/x", wantErr: true},
		{uri: "file:relative/x", wantErr: true},
		{uri: "relative/x", wantErr: true},
		{uri: "file:///tmp/a%00b", wantErr: true},
		{uri: "file:///tmp/%zz", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			got, err := PathFromURI(tt.uri)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("PathFromURI(%q) = %q, want an error", tt.uri, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("PathFromURI(%q) = %q, %v; want %q", tt.uri, got, err, tt.want)
			}
		})
	}
}

func TestURIFromPathRoundTrip(t *testing.T) {
	for _, p := range []string{"/tmp/plain", "/tmp/my dir", "/tmp/a%b", "/tmp/été", "/tmp/a#b?c"} {
		uri := URIFromPath(p)
		got, err := PathFromURI(uri)
		if err != nil || got != p {
			t.Errorf("PathFromURI(URIFromPath(%q) = %q) = %q, %v; want %q", p, uri, got, err, p)
		}
	}
	if got, want := URIFromPath("/tmp/my dir"), "file:///tmp/my%20dir"; got != want {
		t.Errorf("URIFromPath = %q, want %q", got, want)
	}
}

func FuzzPathFromURI(f *testing.F) {
	for _, s := range []string{"file:///tmp/x", "file:///a%20b", "http://x/y", "file://h/x", "%", "file:///%C3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		p, err := PathFromURI(uri)
		if err != nil {
			return
		}
		if p == "" || p[0] != '/' {
			t.Fatalf("PathFromURI(%q) = %q: not absolute", uri, p)
		}
		back, err := PathFromURI(URIFromPath(p))
		if err != nil || back != p {
			t.Fatalf("round trip of %q: got %q, %v", p, back, err)
		}
	})
}
