// RulesStandIn answers firebase-tools' Storage rules runtime protocol (one JSON
// request a line on stdin, one JSON answer a line on stdout) without
// evaluating rules: every ruleset loads, every check is denied. The real
// runtime is a jar firebase-tools downloads, which this machine cannot; with
// this stand-in the Storage emulator starts, and only paths that never ask
// rules (the Admin SDKs, as the owner) behave as with the real one.
// make bench-peers compiles it into the peers cache; it is not part of loupe.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

public class RulesStandIn {
    public static void main(String[] args) throws Exception {
        System.out.println("{\"id\":-1,\"status\":\"ok\"}");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            // firebase-tools writes the request's id last: {..., "id":N}
            int at = line.lastIndexOf("\"id\":");
            if (at < 0) {
                continue;
            }
            String id = line.substring(at + 5).replaceAll("[^0-9-].*$", "");
            String action = line.contains("\"action\":\"load_ruleset\"") ? "load_ruleset" : "verify";
            System.out.println("{\"id\":" + id + ",\"status\":\"ok\",\"action\":\"" + action
                + "\",\"result\":{\"rulesVersion\":2,\"permit\":false},\"errors\":[],\"warnings\":[]}");
            System.out.flush();
        }
    }
}
