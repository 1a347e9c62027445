import { isPaddockError, type PaddockConfig } from "@paddock/common";
import { publishAccountTemplate } from "@paddock/runtime";

/** `paddock templates publish|unpublish EMAIL NAME` (decision 0198). */
export async function publishTemplateCommand(
  config: PaddockConfig,
  email: string,
  name: string,
  published: boolean,
): Promise<number> {
  try {
    console.log(await publishAccountTemplate(config, email, name, published));
    return 0;
  } catch (error) {
    if (!isPaddockError(error)) throw error;
    console.error(`paddock: ${error.message}`);
    return 1;
  }
}
