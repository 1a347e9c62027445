/** Whether a promise fulfils: "does this image/volume exist", "is this rule present". */
export function succeeds(work: Promise<unknown>): Promise<boolean> {
  return work.then(
    () => true,
    () => false,
  );
}
