export {
  ReconnectingWebSocket,
  resolveWebSocket,
  type ReconnectingWebSocketEventMap,
  type ReconnectingWebSocketOptions,
  type WebSocketConstructor,
  type WebSocketLike,
} from './reconnecting-websocket.js';
export {
  defaultWebsocketUrl,
  SubscriptionEmitter,
  SubscriptionManager,
  type SubscriptionEventMap,
  type SubscriptionManagerClient,
  type SubscriptionManagerOptions,
} from './manager.js';
