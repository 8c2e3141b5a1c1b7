export const MANIFEST: string;
export function hashFile(file: string): Promise<string>;
export function buildState(
  outdir: string,
): { fresh: true } | { fresh: false; missing?: true; reason: string };
