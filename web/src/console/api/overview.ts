import { createContext, useContext } from 'react';
import { api } from './client';

/** GET /emulator/v1/overview. */
export type Overview = {
  projectId: string;
  url: string;
  started: string;
  uptimeSeconds: number;
  dataDir: string;
  inMemory: boolean;
  services: {
    name: string;
    address: string;
    bytes: number;
    documents?: number;
    /** running, building, degraded, crashed or failed; detail says what is wrong. */
    state: ServiceState;
    detail?: string;
  }[];
  env: { name: string; value: string }[];
  /** env as `loupe serve --print-env` prints it. */
  exports: string;
};

export type ServiceState = 'running' | 'building' | 'degraded' | 'crashed' | 'failed';

export const fetchOverview = () => api<Overview>('/emulator/v1/overview');

/** The overview loaded at start: the project and the services that run. */
export const OverviewContext = createContext<Overview | null>(null);

export function useOverview(): Overview {
  const o = useContext(OverviewContext);
  if (!o) throw new Error('useOverview needs OverviewContext');
  return o;
}

/** Whether loupe serves the named service. */
export function useServes(name: string): boolean {
  return useOverview().services.some((s) => s.name === name);
}
