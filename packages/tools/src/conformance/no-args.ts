import { z } from 'zod';

/** The arguments of a fixture that takes none (extra keys are dropped, as zod objects do). */
export const NoArgsSchema = z.object({});
export type NoArgs = z.infer<typeof NoArgsSchema>;
