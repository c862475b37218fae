package server

import (
	"encoding/json"
	"net/url"
	"strings"
)

// FirebaseConfig is a project's configuration as the Admin SDKs read it from
// FIREBASE_CONFIG and a web app from /__/firebase/init.json. Its JSON has
// the keys in the order the fields are declared.
type FirebaseConfig struct {
	DatabaseURL   string `json:"databaseURL"`
	ProjectID     string `json:"projectId"`
	StorageBucket string `json:"storageBucket"`
}

// ProjectFirebaseConfig is what firebase-tools constructs for a project it
// does not ask production about (every demo- project, and any project
// offline): the default database https://{project}.firebaseio.com, whose
// namespace is the project id, and the bucket {project}.appspot.com.
// `loupe exec`'s command, every functions worker and the web app's
// init.json all get it, so initializeApp() without options, a database
// trigger without instance() and the JS SDK's default database are one.
func ProjectFirebaseConfig(project string) FirebaseConfig {
	return FirebaseConfig{
		DatabaseURL:   "https://" + project + ".firebaseio.com",
		ProjectID:     project,
		StorageBucket: project + ".appspot.com",
	}
}

// DatabaseNamespace is the Realtime Database namespace DatabaseURL names:
// its host's first label, as firebase-tools reads it (the project id when
// the URL does not parse).
func (c FirebaseConfig) DatabaseNamespace() string {
	u, err := url.Parse(c.DatabaseURL)
	if err != nil || u.Hostname() == "" {
		return c.ProjectID
	}
	ns, _, _ := strings.Cut(u.Hostname(), ".")
	return ns
}

// Emulated is c with DatabaseURL on the Realtime Database emulator at host
// ("host:port"), in the namespace c names, as firebase-tools hands it to
// the functions it runs.
func (c FirebaseConfig) Emulated(databaseHost string) FirebaseConfig {
	c.DatabaseURL = "http://" + databaseHost + "/?ns=" + c.DatabaseNamespace()
	return c
}

// JSON is c as FIREBASE_CONFIG carries it.
func (c FirebaseConfig) JSON() string {
	data, _ := json.Marshal(c)
	return string(data)
}
