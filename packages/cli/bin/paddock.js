#!/usr/bin/env node
// The `paddock` command. Committed (not built) so npm links it on a fresh install, before `tsc -b` has
// made dist/.
import "../dist/main.js";
