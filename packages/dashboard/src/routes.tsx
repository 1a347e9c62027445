import { createHashRouter, Navigate } from "react-router";
import { Shell } from "./components/shell";
import { AuditPage } from "./pages/audit";
import { BillingPage } from "./pages/billing";
import { KeysPage } from "./pages/keys";
import { LoginPage } from "./pages/login";
import { MemoryPage } from "./pages/memory";
import { SandboxesPage } from "./pages/sandboxes";
import { SecretsPage } from "./pages/secrets";
import { SignupPage } from "./pages/signup";
import { TemplatePage } from "./pages/templates/template-page";
import { TemplatesPage } from "./pages/templates/templates-page";
import { RequireSession } from "./session/session";

// Stripe's checkout sends the buyer back to /?checkout=success (or =cancel): the Billing page's
// news, which it shows from its own URL.
const checkoutReturn = new URLSearchParams(window.location.search).get("checkout");
if (checkoutReturn)
  window.history.replaceState(null, "", `/#/billing?${new URLSearchParams({ checkout: checkoutReturn })}`);

// Routes live in the URL's fragment (/#/sandboxes/…): the page is served at / and every other
// path stays the API's, so a link to /sandboxes/{id}/files/download is always the download.
export const router = createHashRouter([
  { path: "/login", element: <LoginPage /> },
  { path: "/signup", element: <SignupPage /> },
  {
    element: <RequireSession />,
    children: [
      {
        element: <Shell />,
        children: [
          { index: true, element: <Navigate to="/sandboxes" replace /> },
          { path: "/sandboxes", element: <SandboxesPage /> },
          // The terminal and the charts are most of the code: loaded when first needed.
          {
            path: "/sandboxes/:id",
            lazy: async () => ({ Component: (await import("./pages/sandbox/sandbox-page")).SandboxPage }),
          },
          { path: "/templates", element: <TemplatesPage /> },
          { path: "/templates/:name", element: <TemplatePage /> },
          { path: "/keys", element: <KeysPage /> },
          { path: "/usage", lazy: async () => ({ Component: (await import("./pages/usage")).UsagePage }) },
          { path: "/billing", element: <BillingPage /> },
          { path: "/secrets", element: <SecretsPage /> },
          { path: "/memory", element: <MemoryPage /> },
          { path: "/audit", element: <AuditPage /> },
          { path: "*", element: <Navigate to="/sandboxes" replace /> },
        ],
      },
    ],
  },
]);
