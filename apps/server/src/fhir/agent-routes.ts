import type { FastifyInstance } from 'fastify';
import type { AgentModule } from '../agent/module.js';

/**
 * The on-premises agents' websocket (/ws/agent, also under /api): the agent authenticates inside
 * the socket (agent:connect:request), so the upgrade itself takes no credentials. Needs
 * @fastify/websocket registered on the app. Closing the app closes the agents' sockets.
 */
export async function agentPlugin(app: FastifyInstance, options: { agents: AgentModule }): Promise<void> {
  for (const prefix of ['', '/api']) {
    app.get(`${prefix}/ws/agent`, { websocket: true }, (socket) => {
      options.agents.hub.accept(socket);
    });
  }
  app.addHook('preClose', async () => {
    await options.agents.stop();
  });
}
