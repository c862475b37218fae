package config

import "bytes"

// byteOrderMark is U+FEFF in UTF-8.
var byteOrderMark = []byte("\uFEFF")

// JSONC turns a JSON file as firebase-tools reads it (with the cjson
// package: firebase.json, .firebaserc, firestore.indexes.json) into plain
// JSON: every U+FEFF byte-order mark is removed and `//` and `/* */`
// comments outside strings become spaces, so that a syntax error still
// names the line and column of the file. An unterminated block comment
// runs to the end of the file, as in cjson.
func JSONC(data []byte) []byte {
	out := bytes.ReplaceAll(data, byteOrderMark, nil)
	if out == nil {
		out = []byte{}
	}
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString && c == '\\':
			i++ // the escaped character cannot end the string
		case c == '"':
			inString = !inString
		case inString || c != '/' || i+1 == len(out):
		case out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			blank(out[i:stop])
			i = stop - 1
		}
	}
	return out
}

// blank replaces every byte but line breaks with a space.
func blank(b []byte) {
	for i, c := range b {
		if c != '\n' && c != '\r' {
			b[i] = ' '
		}
	}
}
