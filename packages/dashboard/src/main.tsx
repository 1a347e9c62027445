import "@mantine/core/styles.css";
import "@mantine/charts/styles.css";
import "@mantine/notifications/styles.css";
import "@xterm/xterm/css/xterm.css";
import { type CSSVariablesResolver, createTheme, MantineProvider, Modal } from "@mantine/core";
import { ModalsProvider } from "@mantine/modals";
import { Notifications } from "@mantine/notifications";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { RouterProvider } from "react-router";
import { ApiError } from "./api/client";
import { router } from "./routes";
import { SessionProvider } from "./session/session";

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal (404, 403, 401) will not change by asking again; a dropped connection may.
      retry: (failures, error) => failures < 2 && !(error instanceof ApiError && error.status > 0),
      refetchOnWindowFocus: true,
    },
  },
});

// Mantine's light scheme draws secondary text in gray 6 and light-variant text (alerts, badges,
// the active navigation link) in shade 6, under WCAG AA's 4.5:1 on white or on their tinted
// backgrounds; shades 7 to 9 pass.
const theme = createTheme({
  primaryColor: "blue",
  primaryShade: { light: 8, dark: 5 },
  defaultRadius: "md",
  // Dialogs and menus appear without animation for people who ask their system for less motion.
  respectReducedMotion: true,
  components: {
    // Every dialog's × button is named for screen readers (Mantine leaves it an unnamed icon).
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { "aria-label": "Close" } } }),
  },
});
const colors = ["blue", "red", "green", "yellow", "orange", "gray", "teal", "dark"];
const readableText: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    "--mantine-color-dimmed": "var(--mantine-color-gray-7)",
    ...Object.fromEntries(
      colors.map((color) => [`--mantine-color-${color}-light-color`, `var(--mantine-color-${color}-9)`]),
    ),
  },
  dark: {},
});

createRoot(document.getElementById("root") as HTMLElement).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="auto" cssVariablesResolver={readableText}>
      <QueryClientProvider client={queryClient}>
        <ModalsProvider>
          <Notifications position="top-right" />
          <SessionProvider>
            <RouterProvider router={router} />
          </SessionProvider>
        </ModalsProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
