// The pages' browser scripts, read once. They sit in assets/ beside this file, and a compiled
// build copies them to assets/ beside its chunks (bin/build.js), so one relative URL finds them
// in both layouts, as the store's migrations are found.
import { readFileSync } from 'node:fs';

/** The workflow editor's island (api/pages/workflow-editor.tsx draws the templates it fills). */
export const WORKFLOW_EDITOR_SCRIPT = readFileSync(
  new URL('./assets/workflow-editor.js', import.meta.url),
  'utf8',
);
