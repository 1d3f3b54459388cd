// The entry: sends the start-up requests, then loads React and the app (see startup.ts).
import { markStartup, sendFirstRequests } from "./startup";
import { loadDisplay } from "./lib/presentation";
import "./styles.css";

markStartup("entry");
const first = sendFirstRequests(window.location.hash);
// The stored theme and stage mode, on <html> before anything is painted: no flash of another theme.
loadDisplay();
const root = document.getElementById("root");
if (root) {
  import("./root").then(
    ({ mount }) => mount(root, first),
    (error: unknown) => {
      // Only a broken build gets here; say so instead of a blank window.
      root.textContent = `The console's interface failed to load: ${String(error)}. Reinstall or rebuild the app.`;
    },
  );
}
