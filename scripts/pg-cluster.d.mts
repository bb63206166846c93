/** A running throwaway cluster (see pg-cluster.mjs). */
export interface Cluster {
  url: string;
  dir: string;
  stop(): void;
}
export function findPostgresBin(): string | undefined;
export function startCluster(): Promise<Cluster>;
export function stopCluster(dir: string): void;
