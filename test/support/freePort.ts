// One probe for free ports, shared with the scripts that start servers (scripts/localEngines.ts).
export { freePort } from '../../scripts/localEngines.js';
