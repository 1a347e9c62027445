import { Errors, type PaddockConfig, PaddockError } from "@paddock/common";
import { openDatabase } from "@paddock/db";
import { databaseUrl } from "../stack.js";
import { TemplateRepository } from "./template-repository.js";

/**
 * The operator makes an account's template visible to every account under its name, or private
 * again (decision 0198), on the server's database directly, as the operator's other host commands
 * do. Answers what it did, in words.
 */
export async function publishAccountTemplate(
  config: PaddockConfig,
  email: string,
  name: string,
  published: boolean,
): Promise<string> {
  const database = await openDatabase(databaseUrl(config));
  try {
    const account = await database.db
      .selectFrom("accounts")
      .select("id")
      .where("email", "=", email.trim().toLowerCase())
      .executeTakeFirst();
    if (!account) throw new PaddockError(Errors.templateNotFound, `no account ${email}`);
    const repository = new TemplateRepository(database.db);
    const template = await repository.findByName(account.id, name);
    if (!template) throw new PaddockError(Errors.templateNotFound, `${email} has no template ${name}`);
    if (published && !template.image)
      throw new PaddockError(Errors.invalidStateTransition, `template ${name} has no successful build yet`);
    await repository.setPublished(template.id, published);
    return `${name} of ${email} is ${published ? "published: every account can start from it" : "its account's own again"}`;
  } finally {
    await database.close();
  }
}
