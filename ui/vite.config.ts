import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

// The Tauri shell loads ui/dist (embedded by the custom-protocol feature) or this dev server.
export default defineConfig({
  plugins: [react()],
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { target: "safari15", outDir: "dist", emptyOutDir: true },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
