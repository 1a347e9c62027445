import { describe, expect, test } from "vitest";
import { EventFeed } from "./process-feed.js";

const event = (n: number) => ({ n });

describe("a process's event feed", () => {
  test("each watcher gets the events from when it started watching, then the end", async () => {
    const feed = new EventFeed({ pause() {}, resume() {} });
    const signal = new AbortController().signal;
    feed.publish(event(0), 1); // nobody watches: dropped
    const first = feed.watch();
    feed.publish(event(1), 1);
    const second = feed.watch();
    feed.publish(event(2), 1);
    feed.end(event(3));
    const drain = async (watcher: ReturnType<EventFeed["watch"]>) => {
      const seen: unknown[] = [];
      for (let next = await watcher.next(signal); next; next = await watcher.next(signal)) seen.push(next);
      return seen;
    };
    expect(await drain(first)).toEqual([event(1), event(2), event(3)]);
    expect(await drain(second)).toEqual([event(2), event(3)]);
    // A watcher that comes after the end gets the end alone.
    expect(await drain(feed.watch())).toEqual([event(3)]);
  });

  test("a watcher that falls behind pauses the output; catching up or leaving resumes it", async () => {
    const calls: string[] = [];
    const feed = new EventFeed({ pause: () => calls.push("pause"), resume: () => calls.push("resume") });
    const signal = new AbortController().signal;
    const slow = feed.watch();
    const quick = feed.watch();
    feed.publish(event(1), 600_000);
    await quick.next(signal);
    feed.publish(event(2), 600_000);
    expect(calls).toEqual(["pause"]);
    await slow.next(signal);
    expect(calls).toEqual(["pause", "resume"]);
    feed.publish(event(3), 2_000_000);
    expect(calls).toEqual(["pause", "resume", "pause"]);
    slow.close();
    quick.close();
    expect(calls).toEqual(["pause", "resume", "pause", "resume"]);
  });

  test("waiting for the next event ends with the abort reason when the stream is cancelled", async () => {
    const feed = new EventFeed({ pause() {}, resume() {} });
    const controller = new AbortController();
    const waiting = feed.watch().next(controller.signal);
    controller.abort(new Error("client went away"));
    await expect(waiting).rejects.toThrow("client went away");
  });
});
