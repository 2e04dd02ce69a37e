import { connectorCatalogue } from '../../connectors/catalogue.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listConnectorKinds: WorkPlatformHandler<'listConnectorKinds'> = () => ({ status: 200, body: { items: [...connectorCatalogue] } });
