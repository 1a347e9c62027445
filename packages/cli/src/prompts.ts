import input from "@inquirer/input";
import password from "@inquirer/password";
import { usageError } from "./output.js";

// Prompts go to stderr, so what a command prints on stdout stays clean for pipes.
const context = { output: process.stderr };

/** The value given, else a prompt when stdin is a terminal, else a usage error naming the option. */
export async function valueOrPrompt(
  value: string | undefined,
  question: { message: string; option: string; hidden?: boolean },
): Promise<string> {
  if (value !== undefined) return value;
  if (!process.stdin.isTTY)
    throw usageError(`${question.option} is missing (and stdin is not a terminal to ask on)`);
  const validate = (answer: string) => answer.length > 0 || "required";
  return question.hidden
    ? password({ message: question.message, mask: false, validate }, context)
    : input({ message: question.message, validate }, context);
}
