// The same operations as the six fuzz files, with many more runs each (`make test-slow`):
// PADDOCK_FUZZ_RUNS, 300 unless set. The files' suites run here one after the other.
process.env.PADDOCK_FUZZ_RUNS ??= "300";
await import("./control-plane.test.js");
await import("./v1.test.js");
await import("./execd.test.js");
await import("./egress.test.js");
await import("./e2b.test.js");
await import("./envd.test.js");
