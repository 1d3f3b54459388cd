import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";

export default tseslint.config(
  { ignores: ["dist", "node_modules", "src/bindings"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx}"],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      "react-hooks/set-state-in-effect": "off",
      "react-hooks/incompatible-library": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // Only the platform module may talk to Tauri: everything else goes through it.
    files: ["src/**/*.{ts,tsx}"],
    ignores: ["src/platform/**", "src/**/*.test.{ts,tsx}", "src/test/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: ["@tauri-apps/*"] }],
    },
  },
);
