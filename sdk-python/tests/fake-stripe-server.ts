// The test suite's Stripe stand-in (test/support/fake-stripe.ts) served for the Python tests: prints
// one JSON line with its address and its accounts' keys, then serves until SIGTERM.
import { FakeStripe } from "../../test/support/fake-stripe.js";

const [proPrice = "price_pro_monthly", ...merchants] = process.argv.slice(2);
const stripe = await FakeStripe.start();
const keys: Record<string, string> = { platform: stripe.addAccount("platform", { prices: [proPrice] }) };
for (const name of merchants) keys[name] = stripe.addAccount(name);
process.on("SIGTERM", () => {
  void stripe.stop().then(() => process.exit(0));
});
console.log(JSON.stringify({ url: stripe.url, keys }));
