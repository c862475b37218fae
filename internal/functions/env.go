package functions

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loupe-dev/loupe/internal/server"
)

// workerEnv is the environment of a worker of codebase c listening on port,
// after the machine's own: what Cloud Functions sets (project, FIREBASE_CONFIG
// as server.ProjectFirebaseConfig derives it, its databaseURL on the
// Realtime Database emulator when loupe serves it, as firebase-tools hands
// it to the functions it runs), what firebase-tools' functions emulator adds
// so the SDKs reach the emulators (EmulatorHosts, the variables `loupe exec`
// gives its command, FUNCTIONS_EMULATOR and the firebase-functions debug
// features that skip token verification, as for the official emulator),
// then the codebase's
// .env, .env.<project> and .env.local files and .secret.local, in that
// order, each overriding the one before, and ExtraEnv.
func (s *Service) workerEnv(c *codebase, port int) []string {
	host := strings.TrimPrefix(s.loupeURL(), "http://")
	project := s.env.ProjectID
	firebaseConfig := server.ProjectFirebaseConfig(project)
	if s.DatabaseHost != nil {
		// The same URL firebase-functions builds for a database event's
		// snapshot, so that the Admin SDK's default database and the
		// snapshot's are one (two URLs of one database are a fatal
		// "Database initialized multiple times"), and the namespace a v1
		// database trigger without instance() listens to.
		firebaseConfig = firebaseConfig.Emulated(s.DatabaseHost())
	}
	env := []string{
		fmt.Sprintf("PORT=%d", port),
		"GCLOUD_PROJECT=" + project, "GOOGLE_CLOUD_PROJECT=" + project,
		"FIREBASE_CONFIG=" + firebaseConfig.JSON(),
		"FCM_ENDPOINT=http://" + host + "/v1",
		"FUNCTIONS_EMULATOR=true",
		"FIREBASE_DEBUG_MODE=true",
		`FIREBASE_DEBUG_FEATURES={"skipTokenVerification":true,"enableCors":true}`,
		"LOUPE_FUNCTIONS_CODEBASE=" + c.name,
	}
	switch {
	case s.EmulatorHosts != nil:
		env = append(env, s.EmulatorHosts()...)
	default:
		env = append(env, "FIRESTORE_EMULATOR_HOST="+host, "FIREBASE_FIRESTORE_EMULATOR_ADDRESS="+host,
			"FIREBASE_AUTH_EMULATOR_HOST="+host,
			"FIREBASE_STORAGE_EMULATOR_HOST="+host, "STORAGE_EMULATOR_HOST=http://"+host,
			"PUBSUB_EMULATOR_HOST="+host, "CLOUD_TASKS_EMULATOR_HOST="+host, "CLOUD_EVENTARC_EMULATOR_HOST=http://"+host)
		if s.DatabaseHost != nil {
			env = append(env, "FIREBASE_DATABASE_EMULATOR_HOST="+s.DatabaseHost())
		}
	}
	for _, name := range []string{".env", ".env." + project, ".env.local", ".secret.local"} {
		vars, err := readDotenv(filepath.Join(c.source, name))
		if err != nil {
			c.logger.Warn("functions environment file skipped", "file", name, "err", err)
			continue
		}
		env = append(env, vars...)
	}
	if s.ExtraEnv != nil {
		env = append(env, s.ExtraEnv()...)
	}
	return env
}

// readDotenv reads a dotenv file as firebase-tools reads a functions .env:
// KEY=VALUE lines, # comments, values in single quotes taken as they are, in
// double quotes with \n, \t, \\ and \" escapes and spanning lines. A missing
// file gives nothing; a line it cannot read is an error naming the line.
func readDotenv(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseDotenv(data)
}

// parseDotenv parses dotenv content (see readDotenv) into KEY=VALUE pairs.
func parseDotenv(data []byte) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, value, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !validEnvKey(key) {
			return nil, fmt.Errorf("line %d: want KEY=VALUE with a key of letters, digits and _", n)
		}
		value = strings.TrimSpace(value)
		switch {
		case strings.HasPrefix(value, "'"):
			end := strings.Index(value[1:], "'")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated ' quote", n)
			}
			value = value[1 : end+1]
		case strings.HasPrefix(value, `"`):
			raw := value[1:]
			start := n
			for !closedQuote(raw) {
				if !sc.Scan() {
					return nil, fmt.Errorf("line %d: unterminated \" quote", start)
				}
				n++
				raw += "\n" + sc.Text()
			}
			value = unescape(raw[:closingQuote(raw)])
		default:
			if i := strings.Index(value, " #"); i >= 0 {
				value = strings.TrimSpace(value[:i])
			}
		}
		out = append(out, key+"="+value)
	}
	return out, sc.Err()
}

func validEnvKey(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// closingQuote is the index of the first unescaped " in s, or -1.
func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func closedQuote(s string) bool { return closingQuote(s) >= 0 }

func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
