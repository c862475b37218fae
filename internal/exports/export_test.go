package exports

// What the external tests (package exports_test, which may start loupe
// through loupetest) use of this package's test helpers.
var FirebaseToolsWithBlobs = firebaseToolsWithBlobs

const StorageDir = storageDir
