import react from "@vitejs/plugin-react";
import { defaultClientConditions, defineConfig } from "vite";

// `npm run dev -w @paddock/dashboard` serves the page with hot reload and sends API calls to a
// `paddock serve` on :8080 (PADDOCK_DASHBOARD_API to aim elsewhere); `npm run build` writes dist/.
const api = process.env.PADDOCK_DASHBOARD_API ?? "http://127.0.0.1:8080";
const apiPaths = ["/auth", "/keys", "/sandboxes", "/secrets", "/memory", "/usage", "/billing", "/templates"];

export default defineConfig({
  plugins: [react()],
  // Workspace packages (@paddock/common) are read from their TypeScript sources, as tsc does.
  resolve: { conditions: ["@paddock/source", ...defaultClientConditions] },
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  server: {
    proxy: Object.fromEntries(apiPaths.map((path) => [path, { target: api, ws: true }])),
  },
});
