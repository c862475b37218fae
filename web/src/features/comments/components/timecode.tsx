import { useState, type ReactNode } from 'react';
import { Select } from '@/components/ui/input';
import type { Timecode } from '@/lib/video-time';
import { TimecodeContext, useTimecode } from '../timecode-context';

const KEY = 'loupe.timecode';

function savedMode(): Timecode['mode'] {
  try {
    return localStorage.getItem(KEY) === 'frames' ? 'frames' : 'clock';
  } catch {
    return 'clock';
  }
}

/**
 * How the review page writes comment timecodes: clock (0:01.25) or frames
 * (00:00:01:06) at the clip's frame rate, a setting kept on this device.
 */
export function TimecodeProvider({ fps, children }: { fps: number; children: ReactNode }) {
  const [mode, setModeState] = useState(savedMode);
  const setMode = (next: Timecode['mode']) => {
    setModeState(next);
    try {
      localStorage.setItem(KEY, next);
    } catch {
      // Storage refused (private browsing): the choice lasts for this page.
    }
  };
  return <TimecodeContext.Provider value={{ mode, fps, setMode }}>{children}</TimecodeContext.Provider>;
}

/** The setting itself: a small select labelled Timecode. */
export function TimecodeSetting() {
  const { mode, fps, setMode } = useTimecode();
  return (
    <label className="flex items-center gap-2 text-xs text-zinc-400">
      Timecode
      <Select
        className="h-8 w-auto py-0 text-xs"
        value={mode}
        onChange={(e) => setMode(e.target.value === 'frames' ? 'frames' : 'clock')}
      >
        <option value="clock">Seconds (0:01.25)</option>
        <option value="frames">Frames at {Math.round(fps)} fps</option>
      </Select>
    </label>
  );
}
