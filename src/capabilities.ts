/**
 * What the server offers beyond accounts and voices listing: each capability installs its
 * engines, routes and readiness checks into the services. The order matters only for logs.
 */
import type { CapabilityInstaller } from './server.js';

export const capabilities: CapabilityInstaller[] = [];
