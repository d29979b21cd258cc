// The sidebars are generated with the content (src/generate/sidebars.ts): the reference
// sidebars list every resource type and SDK symbol, which only the generator knows.
import { readFileSync } from 'node:fs';

export default JSON.parse(readFileSync(new URL('./.generate/sidebars.json', import.meta.url), 'utf8'));
