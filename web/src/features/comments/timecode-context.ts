import { createContext, useContext } from 'react';
import type { Timecode } from '@/lib/video-time';
import { CLOCK_TIMECODE } from './comment-rules';

/** The timecode setting in effect on the review page, and how to change it. */
export interface TimecodeState extends Timecode {
  setMode: (mode: Timecode['mode']) => void;
}

export const TimecodeContext = createContext<TimecodeState>({ ...CLOCK_TIMECODE, setMode: () => undefined });

/** The timecode setting in effect (clock timecodes outside a TimecodeProvider). */
export function useTimecode(): TimecodeState {
  return useContext(TimecodeContext);
}
