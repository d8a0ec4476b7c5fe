import type { Command } from 'commander';
import { connect, type ConnectionOptions } from '../context.js';
import { withConnection, withJson } from '../options.js';
import { printJson } from '../output.js';

/** discover and tools: what the endpoint is and offers. */
export function addEndpointCommands(program: Command): void {
  withJson(withConnection(program.command('discover')))
    .description('server/discover: versions, capabilities, server info')
    .action(async (options: ConnectionOptions) => {
      const result = await (await connect(options)).discover();
      printJson(result);
    });

  withJson(withConnection(program.command('tools')))
    .description('tools/list: the tools this endpoint offers')
    .action(async (options: ConnectionOptions) => {
      const tools = await (await connect(options)).listTools();
      if (options.json) return printJson(tools);
      for (const tool of tools) {
        process.stdout.write(`${tool.name}  ${tool.description ?? tool.title ?? ''}\n`);
      }
    });
}
