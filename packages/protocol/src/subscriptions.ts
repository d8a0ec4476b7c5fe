import { z } from 'zod';
import { META_SUBSCRIPTION_ID, Notification } from './constants.js';
import {
  jsonRpcNotification,
  RequestIdSchema,
  type JsonRpcNotification,
  type RequestId,
} from './jsonrpc.js';
import type { Implementation } from './meta.js';
import { withServerInfo } from './results.js';

/** What a listen stream should carry (SUB); the extension adds `taskIds` (EXT). */
export const SubscriptionFilterSchema = z.looseObject({
  toolsListChanged: z.boolean().optional(),
  promptsListChanged: z.boolean().optional(),
  resourcesListChanged: z.boolean().optional(),
  resourceSubscriptions: z.array(z.string()).optional(),
  taskIds: z.array(z.string()).optional(),
});
export type SubscriptionFilter = z.infer<typeof SubscriptionFilterSchema>;

export const ListenParamsSchema = z.looseObject({
  notifications: SubscriptionFilterSchema,
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export type ListenParams = z.infer<typeof ListenParamsSchema>;

/** A listen asking for task notifications needs the extension declared (R4, C32). */
export function listenRequiresTasksExtension(params: ListenParams): boolean {
  return params.notifications.taskIds !== undefined;
}

export const SubscriptionMetaSchema = z.looseObject({ [META_SUBSCRIPTION_ID]: RequestIdSchema });

export const SubscriptionsAcknowledgedNotificationSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  method: z.literal(Notification.SubscriptionsAcknowledged),
  params: z.looseObject({ notifications: SubscriptionFilterSchema, _meta: SubscriptionMetaSchema }),
});

export interface SubscriptionMeta {
  [META_SUBSCRIPTION_ID]: RequestId;
  [key: string]: unknown;
}

/** The first message of a listen stream: the subset of the filter that is honoured (R21). */
export function buildSubscriptionsAcknowledged(
  subscriptionId: RequestId,
  honoured: SubscriptionFilter,
): JsonRpcNotification<{ notifications: SubscriptionFilter; _meta: SubscriptionMeta }> {
  return jsonRpcNotification(Notification.SubscriptionsAcknowledged, {
    notifications: honoured,
    _meta: { [META_SUBSCRIPTION_ID]: subscriptionId },
  });
}

/** The graceful end of a listen stream: the listen request's own result (SUB). */
export function buildSubscriptionEnd(
  subscriptionId: RequestId,
  serverInfo: Implementation,
): { resultType: 'complete'; _meta: Record<string, unknown> } {
  return withServerInfo(
    { resultType: 'complete' as const, _meta: { [META_SUBSCRIPTION_ID]: subscriptionId } },
    serverInfo,
  );
}
